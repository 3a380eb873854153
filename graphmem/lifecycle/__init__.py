"""An owner's memory over its life: exported (`export`), restored (`restore`) and
forgotten one thing at a time (`forget`)."""
