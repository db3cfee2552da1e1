"""The shared kernel: what the management service, the gateway runtime and the marketplace
admin API have in common. It imports none of the three parts."""
