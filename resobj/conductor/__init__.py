"""The conductor: object methods over RPC for nodes without a database."""
