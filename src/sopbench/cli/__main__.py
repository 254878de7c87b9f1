"""``python -m sopbench.cli``: the console script."""

from sopbench.cli import main

main()
