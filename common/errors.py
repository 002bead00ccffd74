"""Errors shared by the task packages and the configs, kept in the lowest layer both import."""

from __future__ import annotations

__all__ = ["PretrainedWeightsError"]


class PretrainedWeightsError(SystemExit):
    """A pretrained weight file is missing or unreadable; the message is one line naming the file
    and how to get it.

    A `SystemExit`, so where nobody catches it (the `allenact` CLI building a config) Python
    prints the one line and exits 1 without a traceback; CLIs and configs that want exit status 2
    catch it by name and pass it to `common.cli.fail`.
    """
