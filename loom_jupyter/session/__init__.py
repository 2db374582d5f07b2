"""One conversation over time: CoworkSession, write-through of turns, the writer lease, export."""
