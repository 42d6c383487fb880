Bscatter_out_0J<"ó¿3Û|¿Pæ%¿DM¬?Rp¾mJp<¸ú­¿ÜaØ¾ì¾¿©6¿?ÅZ,¾iy¿øÿ
@QÅg¿*w+?