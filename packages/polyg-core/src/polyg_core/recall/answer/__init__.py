"""The answer of a recall: its shape by question type, its time and its confidence."""
