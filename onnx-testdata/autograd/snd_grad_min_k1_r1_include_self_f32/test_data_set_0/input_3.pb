Bgrad_outputJÇ%©?çşKÀJ
è½¼ñº¿¢n‰¿‚8¿