BupdatesJ8õ>Ú\¸ù?ßƒ†Ö`oø¿dV,bAç?y«ù(É@y™J£$gî?p1÷d¬ë?C
Ñ`~Á?