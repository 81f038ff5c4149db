"""``theano.tests``: the helpers Theano's own tests and ported test code use."""

from symscan.compat.theano.tests import unittest_tools

__all__ = ["unittest_tools"]
