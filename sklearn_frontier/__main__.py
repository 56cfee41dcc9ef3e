"""Command line: ``sklearn-frontier demo [methods...]`` (also ``python -m sklearn_frontier demo``)."""

import sys


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: sklearn-frontier demo [methods ...] [--random-state N] [--quiet]")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "demo":
        from sklearn_frontier.demo import main as demo_main

        return demo_main(rest)
    print(f"unknown command {command!r}; try 'sklearn-frontier demo'", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
