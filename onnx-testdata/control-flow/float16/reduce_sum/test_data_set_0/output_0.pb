
ByJyËÈLnÉ