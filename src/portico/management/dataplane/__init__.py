"""The data-plane interface: config snapshots for gateway nodes, tokens, heartbeats."""
