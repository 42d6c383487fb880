
BupdateJ€A