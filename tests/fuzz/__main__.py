"""``python -m tests.fuzz [--minutes N] [--seed S] [--modes ...] [--replay] [--show SEED]``.

The fuzzer's modules import each other by their flat names (``fuzz_program``...), as pytest
sees them (``pythonpath`` in pyproject.toml lists ``tests/fuzz``): the tests tree has no
``__init__.py`` files, so this directory is put on ``sys.path`` here the same way.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_cli import main  # noqa: E402

sys.exit(main())
