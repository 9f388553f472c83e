STOPWORDS_EN: tuple[str, ...]
