BupdatesJ(+AÌipøì?:bj4äVú?¯òÈEÿ?şJXçò&İ¿ˆRM
Dìñ¿