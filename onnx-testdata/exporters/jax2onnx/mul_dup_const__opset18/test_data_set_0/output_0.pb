Bscatter_out_0J(.Ç±¾É†¼>ÈZ?ç*>Zëí¼® œ<f=y¾r$½¿¶mª?0
Z¿