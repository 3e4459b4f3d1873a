"""Small pure rules every layer quotes: how counts and calls read
(``words``), what a title may be (``titles``), what an id may be (``ids``),
how fast a replay or the demo may go (``pacing``). They import nothing of
callstream, so ``--help`` and the sans-I/O core can use them cheaply."""
