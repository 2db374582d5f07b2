"""Dangling-reference hints, measured on a small labelled set."""

from __future__ import annotations

from loom_jupyter.engine.hints import detect_reference, recall_hint, suggested_query

# Messages that point back at earlier conversation (a hint should fire when it is out of view).
REFERS_BACK = [
    "Use the approach we discussed earlier for the outliers.",
    "Fix that error, it showed up in the loader too.",
    "Make the chart like before, but in blue.",
    "As we discussed, drop the test rows.",
    "What was the threshold you said we should use?",
    "Go back to the model we trained yesterday.",
    "Remember the cleaning function? Apply it to the new file.",
    "Do the same as before for March.",
    "Can you rerun the one we built for Q3?",
    "That bug is back.",
    "Use the column names I mentioned at the start.",
    "Like last time, export it to parquet.",
    "Show me that plot with a log scale.",
    "Previously we filtered out the refunds; keep doing that.",
    "Which file did you write earlier?",
    "Apply the fix you suggested for the dates.",
    "Recall the schema of the orders table and use it.",
    "Let's go with the idea we agreed on.",
    "Bring back those results for the west region.",
    "Why did that function fail?",
]

# Ordinary requests (a hint would be noise).
SELF_CONTAINED = [
    "Plot the sales by region.",
    "Load data.csv and show the first rows.",
    "What is the mean of the price column?",
    "Train a random forest on the features.",
    "Write a function that parses ISO dates.",
    "Remember to save the figure as PNG.",
    "Filter orders placed earlier than 2020.",
    "Explain what a p-value is.",
    "Rename the column 'amt' to 'amount'.",
    "Compare revenue before and after the launch.",
    "Try again with a smaller learning rate.",
    "How many rows have missing values?",
    "Sort the table by date, newest first.",
    "Show the last time each customer ordered.",
    "Read the README and summarize it.",
    "I mentioned this dataset to my manager; make a one-page summary.",
    "Make the x axis labels vertical.",
    "Count the distinct customers per month.",
    "Drop duplicate rows and report how many there were.",
    "Save the cleaned frame to clean.parquet.",
]


def rates() -> tuple[float, float]:
    """(recall on references, false-positive rate on self-contained requests)."""
    caught = sum(detect_reference(m) is not None for m in REFERS_BACK)
    false = sum(detect_reference(m) is not None for m in SELF_CONTAINED)
    return caught / len(REFERS_BACK), false / len(SELF_CONTAINED)


def test_detection_on_the_labelled_set() -> None:
    recall, false_positive_rate = rates()
    print(f"hint recall {recall:.0%}, false-positive rate {false_positive_rate:.0%}")
    assert recall >= 0.9
    assert false_positive_rate <= 0.15


def test_no_hint_while_the_window_holds_everything() -> None:
    message = "Use the approach we discussed earlier for the outliers."
    assert recall_hint(message, window_complete=True) is None
    hint = recall_hint(message, window_complete=False)
    assert hint is not None
    assert hint.query == "approach outliers"
    text = hint.text(first_turn_in_view=120)
    assert "conversation_recall" in text
    assert '"query": "approach outliers"' in text
    assert "before 120" in text


def test_no_hint_without_a_reference() -> None:
    assert recall_hint("Plot the sales by region.", window_complete=False) is None


def test_the_suggested_query_keeps_content_words() -> None:
    assert suggested_query("Fix that KeyError in load_orders like before") == (
        "fix keyerror load_orders"
    )
