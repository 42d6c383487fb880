
BupdatesJ€C