"""The imperative shell: settings, the runtime, the CLI, signing keys, logs, the demo and the
budget sweep."""
