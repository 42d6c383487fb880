
ByJGGGG