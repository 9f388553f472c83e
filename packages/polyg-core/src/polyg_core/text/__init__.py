"""Pure text utilities: name normalisation, name finding, the gazetteer, time parsing."""
