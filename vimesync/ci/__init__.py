"""Exact-head CI evidence: what GitHub says about exactly one commit, judged into one verdict."""
