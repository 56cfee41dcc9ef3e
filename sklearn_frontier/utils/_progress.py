"""Progress bars: tqdm when ``verbose`` asks for one, silent otherwise."""

import sys


def progress_bar(iterable=None, *, total=None, desc=None, verbose=1, leave=False, unit="it"):
    """Wrap ``iterable`` in a tqdm bar when ``verbose`` > 0, else return a silent stand-in.

    The returned object supports ``update(n)``, ``set_postfix(**kw)`` and ``close()`` either way.
    """
    if verbose and verbose > 0:
        from tqdm.auto import tqdm

        return tqdm(iterable, total=total, desc=desc, leave=leave, unit=unit, file=sys.stderr, dynamic_ncols=True)
    return _SilentBar(iterable)


class _SilentBar:
    def __init__(self, iterable):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def update(self, n=1):
        pass

    def set_postfix(self, *args, **kwargs):
        pass

    def set_description(self, *args, **kwargs):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
