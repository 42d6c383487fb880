Bgrad_outputJvë¾ƒX¿î£©¿Šñ
¿SkÃ?