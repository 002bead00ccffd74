"""Research studies that ship nothing; the library never imports this package."""
