"""Compliance harness: scikit-learn's check suite plus the project's own contract checks.

``instances.py`` builds fast instances from the registry, ``xfails.py`` lists every expected failure
with its reason, ``data.py`` makes the tiny data each task needs; the ``test_*.py`` modules run them.
"""
