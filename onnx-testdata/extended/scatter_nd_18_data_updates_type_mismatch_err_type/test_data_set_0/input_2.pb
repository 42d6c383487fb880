
BupdatesJ€H