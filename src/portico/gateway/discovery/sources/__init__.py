"""One module per discovery source, each exporting ``SOURCE`` (a ``base.SourceSpec``); the
catalogue finds them all (modules starting with ``_`` are helpers, not sources)."""
