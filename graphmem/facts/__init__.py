"""Facts with validity intervals: observations, profile facts, and the Linker that revises them."""
