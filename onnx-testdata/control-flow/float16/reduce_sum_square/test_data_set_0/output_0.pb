
ByJF]]]X]