Bgrad_outputJ0èâ‹®»â?à‡ÆÊ‘ü¿W—àB;oï¿Ö(P
±/ö?"‡lYƒcâ?Ç4U»Şéµ¿