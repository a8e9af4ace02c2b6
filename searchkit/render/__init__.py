"""What people read: HTML, terminal text, tables and matplotlib plots."""
