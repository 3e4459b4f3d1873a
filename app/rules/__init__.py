"""Small pure rules every layer quotes: how counts and calls read, and the
words of an unknown outcome (``words``), what a finished turn tells the
model (``told``: the loop and the store both call it), what a title may be
(``titles``), what an id may be (``ids``), how fast a replay or the demo may
go (``pacing``). They import nothing of callstream but the core's data model
(``app.stream``), so ``--help`` can use them cheaply."""
