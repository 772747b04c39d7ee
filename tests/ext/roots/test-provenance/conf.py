extensions = ["provenance"]
