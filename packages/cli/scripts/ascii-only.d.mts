/** The bundle's text with every character past ASCII escaped when they are all in comments; else the text as it was. */
export declare const asciiOnly: (text: string) => Promise<string>
