"""Transcripts and recordings kept in the data dir.

The transcript store is in rooms: the stored tree (``tree``: ``StoredTree``,
``StoredUser``, ``StoredTurn``, and the history a path tells the model), the
processes in the middle of an exchange on a conversation (``holds``), the
``Store`` (``transcripts``: its ``writes`` and its paged ``reads``), which
conversation an id names (``naming``), the native file format (``native``),
Markdown (``markdown``), the search index (``search``) and the schema
(``schema``); recordings of the raw streams (``recording``) and what is
pruned (``housekeeping``). The names callers use load from here on first use,
so importing one room does not import the others.
"""

from __future__ import annotations

from ..stream.lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .holds import ConversationBusy, ConversationDeleted
    from .markdown import markdown_of
    from .naming import AmbiguousConversation, ConversationNotFound, UnresolvedConversation, resolve_among
    from .native import VERSION, ImportError_, export_document, import_document, store_conversation
    from .transcripts import Store
    from .tree import StoredEntry, StoredTree, StoredTurn, StoredUser, history_of, retry_point, retryable

__getattr__ = lazy_exports(__name__, {
    ".holds": ("ConversationBusy", "ConversationDeleted"),
    ".markdown": ("markdown_of",),
    ".naming": ("AmbiguousConversation", "ConversationNotFound", "UnresolvedConversation", "resolve_among"),
    ".native": ("VERSION", "ImportError_", "export_document", "import_document", "store_conversation"),
    ".transcripts": ("Store",),
    ".tree": ("StoredEntry", "StoredTree", "StoredTurn", "StoredUser", "history_of", "retry_point", "retryable"),
})

__all__ = ["ConversationBusy", "ConversationDeleted",
           "markdown_of", "AmbiguousConversation", "ConversationNotFound", "UnresolvedConversation", "resolve_among",
           "VERSION", "ImportError_", "export_document", "import_document", "store_conversation", "Store",
           "StoredEntry", "StoredTree", "StoredTurn", "StoredUser", "history_of", "retry_point",
           "retryable"]
