"""``python -m dpcore``: the sweep CLI (:mod:`dpcore.cli`), or the paper CLI after ``paper``.

``python -m dpcore sweep pca|otd …``; ``python -m dpcore paper …`` (:mod:`dpcore.paper_cli`).
"""

import sys


def _main() -> int:
    """Dispatch: ``paper`` to the paper CLI, anything else to the sweep CLI."""
    if sys.argv[1:2] == ["paper"]:
        from dpcore.paper_cli import main as paper_main

        return paper_main(sys.argv[2:])
    from dpcore.cli import main

    return main()


if __name__ == "__main__":
    sys.exit(_main())
