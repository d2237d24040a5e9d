"""Walking an upstream commit range into merged PRs, and classifying them by policy."""
