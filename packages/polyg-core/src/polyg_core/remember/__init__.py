"""What `Memory.remember` derives from an extraction besides the extractor's own output."""
