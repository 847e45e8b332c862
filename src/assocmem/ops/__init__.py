"""The operations every memory computes, written once (docs/architecture.md, "Written once")."""
