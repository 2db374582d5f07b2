"""Dangling-reference hints: "as we discussed" when the discussion is out of view.

When the window no longer holds the whole conversation, a message like "fix
that error like before" may point at turns the model cannot see. Then a short
hint rides with the message telling the model to look it up with
``conversation_recall`` (with a suggested query made of the message's content
words). While the window still holds everything, no hint is given: the model
can see what is meant.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["RecallHint", "detect_reference", "recall_hint", "suggested_query"]

# Phrases that point back at earlier conversation. Kept specific: bare words
# like "before" or "previous" are too common in ordinary requests.
_REFERENCE = re.compile(
    r"\b("
    r"as (we|i|you) (discussed|said|agreed|mentioned|decided|planned)"
    r"|(we|you|i) (discussed|agreed|talked about|decided|went over|settled on|looked at)"
    r"|as discussed|as agreed|as before|like before|like last time|same as before"
    r"|last time|earlier(?! than)|previously|before that"
    r"|you (said|mentioned|suggested|told me|showed|wrote|made)"
    r"|i (said|mentioned|told you|asked)( you)?"
    r"|remember (the|that|when|what|how|our|my|which)"
    r"|do you remember|recall (the|that|when|what|how|our)"
    r"|the one (we|you|i)"
    r"|that (error|bug|issue|exception|traceback|warning|plot|chart|figure|function"
    r"|query|approach|fix|idea|table|model|trick|snippet|number|result)"
    r"|those (errors|plots|charts|results|numbers|changes|files)"
    r"|go back to|back to the"
    r")\b",
    re.IGNORECASE,
)

_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "don",
        "done",
        "down",
        "during",
        "each",
        "earlier",
        "else",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "lets",
        "like",
        "made",
        "make",
        "me",
        "mentioned",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "one",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "please",
        "previously",
        "remember",
        "same",
        "said",
        "say",
        "she",
        "should",
        "show",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "told",
        "too",
        "under",
        "until",
        "up",
        "use",
        "very",
        "want",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "discussed",
        "agreed",
        "talked",
        "time",
        "last",
        "back",
        "go",
        "recall",
        "thing",
        "stuff",
        "again",
        "can't",
        "won't",
    ]
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
MAX_QUERY_WORDS = 6


@dataclass(frozen=True)
class RecallHint:
    """A hint to send with the user's message."""

    phrase: str
    query: str

    def text(self, *, first_turn_in_view: int) -> str:
        """The hint block's text."""
        call = json.dumps({"action": "search", "query": self.query})
        return (
            "<recall_hint>The user's message refers to earlier conversation "
            f'("{self.phrase}"), but turns before {first_turn_in_view} are no longer in your '
            "context window. Before answering, look it up in the archive with "
            f"conversation_recall, for example {call}, rather than guessing.</recall_hint>"
        )


def detect_reference(text: str) -> str | None:
    """The phrase of ``text`` that points back at earlier conversation, if any."""
    match = _REFERENCE.search(text)
    return match.group(0) if match else None


def suggested_query(text: str) -> str:
    """The message's content words (no stop words), as a recall search query."""
    words: list[str] = []
    for word in _WORD.findall(text):
        lowered = word.lower().strip(".")
        if len(lowered) < 3 or lowered in _STOPWORDS or lowered in words:
            continue
        words.append(lowered)
    return " ".join(words[:MAX_QUERY_WORDS])


def recall_hint(text: str, *, window_complete: bool) -> RecallHint | None:
    """A hint for ``text``, or ``None`` when the window holds everything or nothing dangles."""
    if window_complete:
        return None
    phrase = detect_reference(text)
    if phrase is None:
        return None
    return RecallHint(phrase=phrase, query=suggested_query(text) or phrase.lower())
