"""``python -m app`` is the same as the ``callstream`` console script."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
