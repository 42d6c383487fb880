Bgrad_updatesJYû¨¾CŒË½ë=‚¾
ÿ ¿ö§÷?