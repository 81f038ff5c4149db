"""Compatibility namespaces for code written against other libraries' names."""
