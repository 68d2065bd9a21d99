"""Test-only: the third hostile-input campaign's inputs (issue 49), a generator module per defect class."""
