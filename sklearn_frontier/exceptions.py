"""Warnings and errors raised by sklearn_frontier estimators."""

__all__ = []
