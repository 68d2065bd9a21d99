"""Test-only: the third hostile-input campaign (issue 49): a generator module per class of defect, and its tests."""
