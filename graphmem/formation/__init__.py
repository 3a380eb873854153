"""Formation: episodes, extraction and the jobs that run them."""
