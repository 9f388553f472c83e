"""Word lists the rule-based extractor types names with: first names, places, organisations.

Small on purpose: they decide the type of a name the text gives no other clue about
("Priya said" is a person from the verb alone; "Priya" alone only from this list).
Context rules in `names` come first; a list only breaks ties.
"""

from __future__ import annotations

__all__ = [
    "EVERYDAY_NAMES",
    "FIRST_NAMES",
    "GREETINGS",
    "KINSHIP",
    "ORG_SUFFIXES",
    "PLACE_NAMES",
    "PLACE_SUFFIXES",
    "words",
]


def words(text: str) -> frozenset[str]:
    """The whitespace-separated words of text, as a set (for word lists written as prose)."""
    return frozenset(text.split())


FIRST_NAMES = words(
    """
    aaron abby adam adrian ahmed aisha alan alex alexander alexandra alice alicia amanda
    amelia amir amy ana andrea andrew andy angela anna anne anthony arjun ava ben benjamin
    beth bob brian carla carlos caroline carol catherine charles charlie chen chloe chris
    christina claire daniel dan daria david deborah diana diego dmitri elena eli elijah
    elizabeth ella emily emma eric erin ethan eva fatima felix fiona frank gabriel george
    grace greg hana hannah harry helen henry hiro ian isaac isabel isabella jack jacob james
    jane jason jay jen jenny jennifer jessica jim joe john jonas jordan jose joseph josh
    julia julian karen kate katie kevin kim laura lea leo liam lily linda lisa lucas lucy
    luis luke maria mark marta mary mateo matt max maya mei melanie mia michael miguel
    mike nadia naomi natalia nathan nina noah nora olga oliver olivia omar oscar pablo paul
    peter priya rachel rahul raj rebecca ricardo robert rosa ryan sam samuel sara sarah
    sean sofia sophia sophie stephen steve susan tanya theo thomas tim tom tony una victor
    wei will william yuki yusuf zara zoe
    """
)

PLACE_NAMES = words(
    """
    amsterdam athens austin bangalore barcelona beijing berlin boston brazil brussels
    california canada chicago china copenhagen denver dublin egypt england europe france
    germany greece hamburg india ireland italy japan kenya kyoto lagos lisbon london
    madrid mexico miami milan montreal moscow mumbai munich nairobi norway oslo paris
    peru portugal prague rome seattle seoul singapore spain stockholm sweden sydney
    texas tokyo toronto vancouver vienna warsaw zurich africa asia
    """
)

PLACE_SUFFIXES = words(
    """
    street road avenue crescent terrace gardens square centre center station library
    lodge manor
    """
)
"""The last word of a place's name ("Harmony Street", "Larkfield Lodge"); words that are
also surnames (Park, Hill, Lane, Hall) are left out."""

EVERYDAY_NAMES = words(
    """
    will mark rose may bill grace hope faith joy dawn summer june april august amber penny
    ruby jack frank guy max pat art ray sky river rain storm hunter chase drew gene sue bob
    rob nick jean dean earl glen lily daisy ivy holly heather iris olive jade pearl crystal
    robin wren jay cliff rocky sunny hazel ginger candy honey sandy rusty buck brook autumn
    destiny harmony melody precious angel star hero king prince bishop baker cook miller
    taylor carter mason porter hunter page fox wolf bear young little long short white
    black brown green gray grey rich don ben kit sage fern heath ash bay reed stone
    monday tuesday wednesday thursday friday saturday sunday january february march july
    september october november december
    """
)
"""Names that are also everyday words: first names ("will", "grace", "guy"), and the days
and months, which notes often write in lower case ("sunday service 10:30"). Written in
lower case inside a note they are the word, not the name."""

ORG_SUFFIXES = words(
    """
    labs lab inc corp corporation ltd llc gmbh company co bank university college school
    hospital foundation institute agency studio studios technologies systems group clinic
    garage motors energy power vets pharmacy bakery cafe salon fitness dental insurance
    airlines airways services
    """
)

GREETINGS = words(
    """
    Hey Hi Hello Hiya Yo Dear Thanks Thank Congrats Congratulations Wow Oh Ah Aw Aww Yeah
    Yep Yes Nope Sure Cool Great Nice Awesome Amazing Sorry Haha Lol Omg Good Morning
    Evening Afternoon Night Happy Welcome Bye Goodbye Cheers Okay Hmm Um Well Just Maybe
    Really Definitely Absolutely Totally Love Hope Glad Totally Anyway Also Btw FYI Fyi
    """
)

KINSHIP = words(
    """
    friend friends sister brother mom mum dad mother father son daughter wife husband
    partner cousin aunt uncle grandma grandpa grandmother grandfather niece nephew
    colleague coworker boss manager neighbor neighbour roommate kid kids child children
    girlfriend boyfriend fiance fiancee teammate
    husb hubby bro sis bf gf flatmate housemate ex twin parents stepdad stepmum stepmom
    grandson granddaughter gran granny grandad nan nana
    mate bestie pal buddy classmate stepson stepdaughter godson goddaughter
    landlord landlady lodger tenant
    """
)
