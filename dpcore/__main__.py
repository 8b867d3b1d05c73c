"""``python -m dpcore sweep pca|otd …``: see :mod:`dpcore.cli`."""

import sys

from dpcore.cli import main

if __name__ == "__main__":
    sys.exit(main())
