"""Builders the tests share: real git repositories, patch stacks, upstream histories, a fake
GitHub server, CLI runners, trees and the git-apply reference, hostile checkouts, sample reports.

Test modules import helpers only from here, never from one another (tests/test_test_layout.py)."""
