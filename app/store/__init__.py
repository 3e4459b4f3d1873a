"""Transcripts (and, later, recordings) kept in the data dir."""
